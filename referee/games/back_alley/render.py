from ..base import Renderer
class _R(Renderer):
    def score_table(self, entries): return [], []
    def render(self, entries, *, seat=None, deal=None): return []
RENDERER = _R()
