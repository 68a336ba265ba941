"""The renderers (Jinja, ``templates/``): :mod:`.handoff` writes the text of ``00-handoff.md``
from a state, :mod:`.skill` the skill docs of a workflow; both print every value through the
escaping filters of the shared environment in :mod:`.environment`. They return text and
write nothing (the commands write the files)."""
