"""Learned, question-conditioned table relevance and completion (the README's relevance section).

A fine-tuned MiniLM bi-encoder scores every table of the lake for a question; a classifier
over the best candidates' features — score, words and values the question shares with the
table, where it lies relative to the best tables in the lake graph, what the intent
extractor and the beam chose — gives each the probability that the question needs it; the
set of highest expected F1 is the answer, the budget its cap. Trained on questions with
known tables, on pseudo-questions generated from the lake itself, or both.
"""
from raylake.relevance.classifier import CompletionClassifier
from raylake.relevance.encoder import BiEncoder
from raylake.relevance.features import FEATURES, CandidateFeatures
from raylake.relevance.model import PACKAGED, LakeRelevance, RelevanceModel
from raylake.relevance.select import choose
from raylake.relevance.text import name_words, table_text

__all__ = ["BiEncoder", "CandidateFeatures", "CompletionClassifier", "FEATURES", "LakeRelevance", "PACKAGED",
           "RelevanceModel", "choose", "name_words", "table_text"]
