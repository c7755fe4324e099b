"""The networks: the card-slot policy in torch (:mod:`~agents.nets.policy_net`) and in numba
(:mod:`~agents.nets.numba_net`, what the search calls per leaf), the torch evaluator for a GPU,
checkpoints and the shipped networks (:mod:`~agents.nets.shipped`)."""
