"""SiP-ML's placement (Algorithm 1), its local search, and the circulant list schedule."""
