"""Generation's public face for the modules that recompute a bank question's candidates (alter's checks).

A pair check finds a question's candidate again on the original and on an altered record: it needs to know
whether the question's template can be recomputed, what of the record its rule reads, the candidates the rule
gives on a series, and the parameters that tell candidates apart. This module says that in four calls, so
callers never reach into reviewer.bank.generate's tables (COMPUTE, COMPUTE_PARTS, templates()).
generate is imported on first use: importing this module stays cheap.
"""

from __future__ import annotations

from typing import Any


def recomputable(template: str | None) -> bool:
    """True when the template is known and its compute rule can be run again on a series."""
    from reviewer.bank import generate as G

    return template in G.templates() and G.templates()[template]["compute"] in G.COMPUTE


def reads_snow(template: str) -> bool:
    """True when the template's compute rule reads the snow product (snow rules read nothing else)."""
    from reviewer.bank import generate as G

    return "snow" in G.COMPUTE_PARTS.get(G.templates()[template]["compute"], ())


def series_parts(templates: list[str]) -> frozenset[str]:
    """The build_series parts the named templates' rules need."""
    from reviewer.bank.generate import series_parts as parts

    return parts(templates)


def compute(series: Any, template: str) -> list[Any]:
    """The template's candidates on a series (reviewer.bank.series.SiteSeries), as generation computes them."""
    from reviewer.bank import generate as G

    return G.run_compute(series, template)


def candidate_params(candidate: Any) -> dict[str, Any]:
    """The parameters that tell a template's candidates apart, as kept in a question's provenance."""
    from reviewer.bank.generate import candidate_params as params

    return params(candidate)
