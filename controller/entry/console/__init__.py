"""The web console (issue 30): the service's runs, checks, targets and conversations in a browser.

Served by ``serve`` at ``/`` on the API's port, in the API's process, over the same store,
tokens and tenancy (:class:`~controller.entry.service.auth.Principal`). Pages are rendered on
the server (Jinja2, autoescaped) and read correctly without scripts; one small script
(``static/console.js``) adds live updates (the browser's ``EventSource`` on the run's event
stream), keyboard navigation and relative times. See docs/console.md.
"""
