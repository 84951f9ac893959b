"""Views: turn plans, topologies and reports into text, files and pictures.

Renderers read pipeline results and never recompute them.
"""
