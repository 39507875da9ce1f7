"""Datasets in memory and on disk: Fashion-MNIST offline first, digits, CIFAR-10, image folders, batches.

``dataset`` (the ``Dataset`` type, ``subset``) under ``datasets`` (``load_dataset``: the named datasets,
the fallback), which reads ``fashion_mnist`` and ``cifar10`` (the files on disk); ``loaders`` (``batches``,
``worker_counts``, ``synthetic``) and ``image_files`` (PNG folders) stand apart.
"""

# ``cu.data.<module>.<name>`` always resolves:
from . import cifar10, dataset, datasets, fashion_mnist, image_files, loaders  # noqa: F401


def __getattr__(name: str) -> object:
    """0.1's ``cu.data.<name>`` (the module this subpackage replaced), with a DeprecationWarning, until 0.3."""
    from .._moved import old_attribute

    return old_attribute("data", name)
