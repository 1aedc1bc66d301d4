//! The hardware catalog: machines as their vendors document them, from `assets/hardware/`.
