"""Multi-agent PPO with action masks on RLlib: one shared policy for every seat (``python -m training.rllib_ppo``).

Why a package of its own: model-free training past one machine. Its config
(:mod:`.config`), the env adapter RLlib's masking module needs (:mod:`.env`) and
the trainer loop with checkpoints and evaluation (:mod:`.loop`). Ray RLlib is the
``rllib`` extra, which pins gymnasium 1.2.2: docs/tutorials/rllib.md.
"""
