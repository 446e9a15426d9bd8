"""How to find a good answer: the papers' heuristics and the exact combinatorial algorithms, one module or subpackage per problem kind."""
