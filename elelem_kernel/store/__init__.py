"""The notebook as the store: what proves a record was written by this person's sessions."""
