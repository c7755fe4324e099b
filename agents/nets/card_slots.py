"""The card slots the PPO network scores: what its torch form (:mod:`agents.nets.policy_net`) and its
numba copy (:mod:`agents.nets.numba_net`) must agree on, defined once for both."""

#: Card slots: the 12 market cards, then the observer's 3 reserved cards.
N_SLOTS = 15
#: Card-gap features appended to the observation: 4 per slot, for the observer and the next seat.
CARD_GAP_DIM = 2 * N_SLOTS * 4

__all__ = ["CARD_GAP_DIM", "N_SLOTS"]
