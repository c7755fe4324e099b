"""The test suite, a package so that every test imports its helpers one way: ``from tests.helpers import ...``."""
