"""Expert iteration: a network trained towards what ``az``'s search chose and how its games ended.

``selfplay`` plays and records the games, ``replay`` holds their positions,
``learner`` trains on them, ``gate`` decides which network plays the next games,
``loop`` runs those steps as a checkpointed run; ``network`` builds the network,
``config`` reads the run's YAML, ``ship`` copies a result into ``agents/shipped``.
The commands are ``python -m training.search_train`` and ``python -m training.ship``.
"""
