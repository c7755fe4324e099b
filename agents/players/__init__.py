"""The players a user names in a spec (``random``, ``greedy``, ``lookahead``, ``mcts``, ``az``, ``ppo``,
``human``, ``rllib``): each an :class:`agents.base.Agent`, built by :mod:`agents.registry`."""
