"""The incremental per-rank kernel cache (``rank_N/kernel_meta``): see kernel_meta.KernelCache."""
from .auth import CacheKeyError
from .kernel_meta import CacheStats, CacheWarning, KernelCache
from .layout import CacheSecurityError, kernel_meta_dir
from .locks import CacheLockTimeoutError

__all__ = ["CacheKeyError", "CacheLockTimeoutError", "CacheSecurityError", "CacheStats", "CacheWarning", "KernelCache",
           "kernel_meta_dir"]
