//! Parser for `nvidia-smi topo -m`, `topo -mp` and `topo -p2p r|w|n|a` text.
