"""devicelint: find PyTorch device-placement bugs before they cost a GPU run."""

__version__ = "0.1.0"
