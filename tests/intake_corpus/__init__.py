"""The intake agent's scripted conversations, in classes (see corpus.py); ``make eval-intake`` runs them."""
