"""Tree search: the tree and its kernels (:mod:`~agents.search.tree`), the one driver that searches
one tree or many in step (:mod:`~agents.search.driver`), Gumbel's root and kept subtrees."""
