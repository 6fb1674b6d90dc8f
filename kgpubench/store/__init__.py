"""The store layer: rows become versioned, schema-checked configs.

Data flows one way through this folder: ``identity``/``locking``/``shards`` (row identity, the writers' lock,
atomic shard files) -> ``validation`` (every violation of a row), ``card``/``croissant`` (generated metadata)
-> ``store`` (manifest, versions, transactional merge), ``checks`` (``kgpubench validate``), ``bundle``
(the packaged data), ``hub`` (Hugging Face), ``upgrade`` (old stores to the current schema) -> ``loading``
(:func:`kgpubench.store.loading.load_dataset`). This ``__init__`` imports nothing, so that reading one
module never loads the others.
"""
