"""The semantic half of hybrid engines: a static embedding model in exact integers."""
