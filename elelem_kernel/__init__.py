"""elelem-kernel: an agent harness for Jupyter."""

__version__ = "0.1.0"
