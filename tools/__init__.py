"""Maintainer tools: running every lesson, building notebooks."""
