"""`python -m elelem_kernel.jupyter -f CONNECTION_FILE`: start the Elelem kernel."""

from __future__ import annotations

from ipykernel.kernelapp import IPKernelApp

from elelem_kernel.jupyter.kernel import ElelemKernel

if __name__ == "__main__":
    IPKernelApp.launch_instance(kernel_class=ElelemKernel)
