"""Jupyter wiring: the `%%elelem` magic, the Elelem kernel, the notebook as the store of the
conversation, approval channels in a notebook, and the kernelspec install.
"""
