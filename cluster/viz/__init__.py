"""Pictures of a cluster: the self-contained HTML report of a run or a benchmark, and the
pages of ``kubemu serve``'s live view at ``/ui``.

``figures.py`` turns a report into Plotly figure specifications, ``page.py`` puts a page
together (template, style, Plotly's bundle from the ``plotly`` package), ``reportpage.py``
writes the run and bench pages. It reads only JSON reports and views, never a component,
so the scenario driver, the CLI and the HTTP front end can all call it.
"""
