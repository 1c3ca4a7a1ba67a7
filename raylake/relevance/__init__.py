"""Learned, question-conditioned table relevance and completion (the README's relevance section).

A fine-tuned MiniLM bi-encoder scores every table of the lake for a question; a classifier
over the best candidates' features — score, words and values the question shares with the
table, where it lies relative to the best tables in the lake graph, what the intent
extractor and the beam chose — gives each the probability that the question needs it; a
second classifier extends the answer one table at a time given the tables already in it,
and the prefix of highest expected F1 + P(sufficient) is the answer, the budget its cap.
Trained on questions with known tables, on pseudo-questions generated from the lake itself,
or both.
"""
from raylake.lake.names import name_words
from raylake.relevance.classifier import CompletionClassifier
from raylake.relevance.complete import STATE_FEATURES, Calibration, Completion
from raylake.relevance.encoder import BiEncoder
from raylake.relevance.features import FEATURES, CandidateFeatures
from raylake.relevance.model import PACKAGED, LakeRelevance, Ranking, RelevanceModel
from raylake.relevance.select import best_prefix, choose
from raylake.relevance.text import table_text

__all__ = ["BiEncoder", "Calibration", "CandidateFeatures", "Completion", "CompletionClassifier", "FEATURES",
           "LakeRelevance", "PACKAGED", "Ranking", "RelevanceModel", "STATE_FEATURES", "best_prefix", "choose",
           "name_words", "table_text"]
