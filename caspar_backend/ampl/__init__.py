"""caspar as an AMPL solver: the ``caspar`` executable reads ``.nl`` files and writes
``.sol`` files (:mod:`.driver`), through :mod:`.nl_reader` and :mod:`.sol_file`."""
