"""Differentiable primitives, grouped by family (forward and backward side by side)."""
