"""The book's toolchain: what turns the chapter notebooks into the published book and checks it.

It imports the reader's library (``dynamics``); the library never imports it.

- ``sphinx``: the Sphinx extension ``_config.yml`` lists (serves plotly.js, the page scripts
  and styles, stamps the footer); ``scripts`` assembles ``static/*.js`` and ``static/*.css``
- ``darkmode``, ``access``, ``viewlink``: figures in the dark theme, for every reader (keyboard,
  text alternatives, axe-core), and a figure's view in the page's address
- ``pages`` (build the book in a copy, read its pages in Chromium), ``htmlcheck`` (the built
  pages as text), ``printed`` (the PDF edition)
- ``colab`` (the first cell of every chapter), ``newchapter`` (a new chapter's files)

``python -m dynamics_toolchain build --shots`` builds a copy of the book and checks its pages.
"""
