"""TopoOpt's TopologyFinder (TotientPerms, SelectPermutations, CoinChangeMod) and the topology baselines, with their routing."""
