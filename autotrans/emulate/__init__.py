"""Running kernels' template code on the host: the emulator and the bank-conflict report."""
