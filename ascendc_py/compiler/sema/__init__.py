"""Semantic analysis: AST -> typed kernel IR."""
