//! Streams and events, each bound to its context for every call and destroyed on drop.

use std::sync::Arc;

use cudarc::driver::sys;

use super::context::Context;
use super::{CudaError, check};

/// A non-blocking stream (it never waits on the legacy default stream).
#[derive(Debug)]
pub struct Stream {
    ctx: Arc<Context>,
    raw: sys::CUstream,
}

// SAFETY: a CUstream is a driver handle usable from any thread with its context current; every
// method binds the context first.
unsafe impl Send for Stream {}
// SAFETY: as above; no interior mutability.
unsafe impl Sync for Stream {}

impl Stream {
    /// Creates a stream with CU_STREAM_NON_BLOCKING in `ctx`.
    pub fn new(ctx: &Arc<Context>) -> Result<Stream, CudaError> {
        ctx.bind()?;
        let mut raw: sys::CUstream = std::ptr::null_mut();
        // SAFETY: out-parameter; the context is current.
        check("cuStreamCreate", unsafe {
            sys::cuStreamCreate(
                &mut raw,
                sys::CUstream_flags_enum::CU_STREAM_NON_BLOCKING as u32,
            )
        })?;
        Ok(Stream {
            ctx: ctx.clone(),
            raw,
        })
    }

    /// The context the stream belongs to.
    pub fn ctx(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// The raw handle, for enqueuing work. Bind [`Stream::ctx`] first.
    pub fn raw(&self) -> sys::CUstream {
        self.raw
    }

    /// Makes later work on this stream wait for `event`'s most recent record (which may be on
    /// another GPU's stream).
    pub fn wait_event(&self, event: &Event) -> Result<(), CudaError> {
        self.ctx.bind()?;
        // SAFETY: both handles are live; flags must be 0.
        check("cuStreamWaitEvent", unsafe {
            sys::cuStreamWaitEvent(self.raw, event.raw(), 0)
        })
    }

    /// True when everything enqueued so far has finished; never blocks.
    pub fn is_idle(&self) -> Result<bool, CudaError> {
        self.ctx.bind()?;
        // SAFETY: `raw` is a live stream of the current context.
        let r = unsafe { sys::cuStreamQuery(self.raw) };
        if r == sys::cudaError_enum::CUDA_ERROR_NOT_READY {
            return Ok(false);
        }
        check("cuStreamQuery", r).map(|()| true)
    }

    /// Waits until everything enqueued so far has finished.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        self.ctx.bind()?;
        // SAFETY: `raw` is a live stream of the current context.
        check("cuStreamSynchronize", unsafe {
            sys::cuStreamSynchronize(self.raw)
        })
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: `raw` was created by cuStreamCreate and is destroyed once; pending work still
        // completes (the driver defers the release). Errors cannot be acted on here.
        unsafe {
            if self.ctx.bind().is_ok() {
                sys::cuStreamDestroy_v2(self.raw);
            }
        }
    }
}

/// A timing event (default flags).
#[derive(Debug)]
pub struct Event {
    ctx: Arc<Context>,
    raw: sys::CUevent,
}

// SAFETY: a CUevent is a driver handle; every method binds its context first.
unsafe impl Send for Event {}

impl Event {
    /// Creates an event in `ctx`.
    pub fn new(ctx: &Arc<Context>) -> Result<Event, CudaError> {
        ctx.bind()?;
        let mut raw: sys::CUevent = std::ptr::null_mut();
        // SAFETY: out-parameter; the context is current.
        check("cuEventCreate", unsafe {
            sys::cuEventCreate(&mut raw, sys::CUevent_flags_enum::CU_EVENT_DEFAULT as u32)
        })?;
        Ok(Event {
            ctx: ctx.clone(),
            raw,
        })
    }

    /// Creates an event without timing (CU_EVENT_DISABLE_TIMING), cheaper to record and wait
    /// on: for ordering work across streams and GPUs.
    pub fn new_untimed(ctx: &Arc<Context>) -> Result<Event, CudaError> {
        ctx.bind()?;
        let mut raw: sys::CUevent = std::ptr::null_mut();
        // SAFETY: out-parameter; the context is current.
        check("cuEventCreate", unsafe {
            sys::cuEventCreate(
                &mut raw,
                sys::CUevent_flags_enum::CU_EVENT_DISABLE_TIMING as u32,
            )
        })?;
        Ok(Event {
            ctx: ctx.clone(),
            raw,
        })
    }

    /// The raw handle.
    pub fn raw(&self) -> sys::CUevent {
        self.raw
    }

    /// Records the event on `stream` (which must belong to the same context).
    pub fn record(&self, stream: &Stream) -> Result<(), CudaError> {
        self.ctx.bind()?;
        // SAFETY: both handles are live and belong to the current context.
        check("cuEventRecord", unsafe {
            sys::cuEventRecord(self.raw, stream.raw())
        })
    }

    /// Milliseconds from `start` to `self`, both recorded and completed.
    pub fn elapsed_ms_since(&self, start: &Event) -> Result<f64, CudaError> {
        self.ctx.bind()?;
        let mut ms = 0f32;
        // SAFETY: out-parameter; both events are live and have completed (the caller has
        // synchronised their streams).
        check("cuEventElapsedTime_v2", unsafe {
            sys::cuEventElapsedTime_v2(&mut ms, start.raw, self.raw)
        })?;
        Ok(f64::from(ms))
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: destroyed once; errors cannot be acted on here.
        unsafe {
            if self.ctx.bind().is_ok() {
                sys::cuEventDestroy_v2(self.raw);
            }
        }
    }
}
