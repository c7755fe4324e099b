"""Refitting a network's critic on the outcomes of many cheap games of the network alone.

The command is :mod:`training.critic_fit`; the config :mod:`training.critic.config`, the
games and their positions :mod:`training.critic.positions`, the training :mod:`training.critic.fit`.
"""
