//! This machine's topology, read through NVML and the CUDA driver API.
