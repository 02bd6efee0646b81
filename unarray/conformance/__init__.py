"""The conformance suite: every op on every installed backend and visible device, compared
with a float64 reference; every handoff pair checked for zero-copy; the precision policy
checked. Run it with ``python -m unarray check`` (see ``conformance/README.md``).

``run()`` returns a :class:`RunReport`; ``write_all(report, out_dir)`` writes the Markdown
matrix, JSON and JUnit XML.

The rooms: ``cases`` (every case; ``cases_common`` and one module per group of ops), ``runner``
(what runs where), ``check`` (one case or handoff, compared), ``worker`` (the child processes),
``results`` and ``report`` (what comes back and how it is written), ``deviations`` (the known
deviations and the platform matrix), ``distributed``, ``sharded_jax``, ``sharded_torch`` and
``sharded_torch_rank`` (the multi-device profile). The suite calls unarray as a user does
(``import unarray as ua``) plus the handoff's path table for what it expects; unarray itself never imports it.
"""

from __future__ import annotations

from unarray.conformance.report import junit_xml, markdown, write_all
from unarray.conformance.results import Result, RunReport
from unarray.conformance.runner import run

__all__ = ["Result", "RunReport", "junit_xml", "markdown", "run", "write_all"]
