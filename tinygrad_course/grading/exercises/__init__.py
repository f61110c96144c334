"""Check modules, one per chapter: ``chNN.py`` registers the exercises ``NN.K`` of chapter NN."""
