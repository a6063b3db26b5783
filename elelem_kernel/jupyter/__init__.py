"""jupyter."""
