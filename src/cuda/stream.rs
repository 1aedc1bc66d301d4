//! Streams, events and captured graphs, each bound to its context for every call and destroyed
//! on drop; the copies a stream enqueues.

use std::ffi::c_void;
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

    /// Enqueues a copy of `bytes` from host memory at `src` (pinned or pageable) to the device
    /// address `dst` (`cuMemcpyHtoDAsync_v2`). The caller binds [`Stream::ctx`] first, so that a
    /// loop of copies binds once, as every copy loop of the measurements does.
    ///
    /// # Safety
    ///
    /// `src` must point to `bytes` readable bytes and `dst` to `bytes` of device memory this
    /// stream's context can address, both allocated until the stream has run the copy.
    pub unsafe fn copy_htod(
        &self,
        dst: sys::CUdeviceptr,
        src: *const c_void,
        bytes: usize,
    ) -> Result<(), CudaError> {
        // SAFETY: the ranges are the caller's (above); the stream is live.
        check("cuMemcpyHtoDAsync_v2", unsafe {
            sys::cuMemcpyHtoDAsync_v2(dst, src, bytes, self.raw)
        })
    }

    /// Enqueues a copy of `bytes` from the device address `src` to host memory at `dst`
    /// (`cuMemcpyDtoHAsync_v2`). The caller binds [`Stream::ctx`] first.
    ///
    /// # Safety
    ///
    /// `dst` must point to `bytes` writable bytes and `src` to `bytes` of device memory this
    /// stream's context can address, both allocated (and `dst` not read) until the stream has
    /// run the copy.
    pub unsafe fn copy_dtoh(
        &self,
        dst: *mut c_void,
        src: sys::CUdeviceptr,
        bytes: usize,
    ) -> Result<(), CudaError> {
        // SAFETY: the ranges are the caller's (above); the stream is live.
        check("cuMemcpyDtoHAsync_v2", unsafe {
            sys::cuMemcpyDtoHAsync_v2(dst, src, bytes, self.raw)
        })
    }

    /// Enqueues a copy of `bytes` between device addresses (`cuMemcpyAsync`: the same GPU, or a
    /// peer's memory through unified addressing). The caller binds [`Stream::ctx`] first.
    ///
    /// # Safety
    ///
    /// `src` and `dst` must each address `bytes` of device memory, allocated until the stream
    /// has run the copy.
    pub unsafe fn copy_dtod(
        &self,
        dst: sys::CUdeviceptr,
        src: sys::CUdeviceptr,
        bytes: usize,
    ) -> Result<(), CudaError> {
        // SAFETY: the ranges are the caller's (above); the stream is live.
        check("cuMemcpyAsync", unsafe {
            sys::cuMemcpyAsync(dst, src, bytes, self.raw)
        })
    }

    /// Enqueues a copy of `bytes` from `src` in the GPU of context `src_ctx` to `dst` in that of
    /// `dst_ctx` (`cuMemcpyPeerAsync`: staged by the driver when the GPUs have no peer access;
    /// the contexts as [`Context::raw`] gives them). The caller binds [`Stream::ctx`] first.
    ///
    /// # Safety
    ///
    /// Both contexts must be live, and `src` and `dst` each address `bytes` of their context's
    /// device memory, allocated until the stream has run the copy.
    pub unsafe fn copy_peer(
        &self,
        dst: sys::CUdeviceptr,
        dst_ctx: sys::CUcontext,
        src: sys::CUdeviceptr,
        src_ctx: sys::CUcontext,
        bytes: usize,
    ) -> Result<(), CudaError> {
        // SAFETY: the caller's contract above; the stream is live.
        check("cuMemcpyPeerAsync", unsafe {
            sys::cuMemcpyPeerAsync(dst, dst_ctx, src, src_ctx, bytes, self.raw)
        })
    }

    /// Starts capturing what this thread enqueues on the stream into a graph
    /// (`cuStreamBeginCapture_v2`, thread-local mode: only this thread's calls that are unsafe
    /// during a capture would break it, not NCCL's or other threads'). End it with
    /// [`Stream::end_capture`].
    pub fn begin_capture(&self) -> Result<(), CudaError> {
        self.ctx.bind()?;
        // SAFETY: a live stream of the current context; the driver refuses one already
        // capturing.
        check("cuStreamBeginCapture_v2", unsafe {
            sys::cuStreamBeginCapture_v2(
                self.raw,
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        })
    }

    /// Ends the capture begun by [`Stream::begin_capture`] (`cuStreamEndCapture`). The graph
    /// comes back in any case, so that what was captured is destroyed; it is not instantiated
    /// yet ([`Graph::instantiate`]).
    pub fn end_capture(&self) -> (Graph, Result<(), CudaError>) {
        let mut graph = Graph {
            ctx: self.ctx.clone(),
            graph: std::ptr::null_mut(),
            exec: std::ptr::null_mut(),
        };
        let ended = self.ctx.bind().and_then(|()| {
            // SAFETY: ends a capture on this live stream; out-parameter.
            check("cuStreamEndCapture", unsafe {
                sys::cuStreamEndCapture(self.raw, &mut graph.graph)
            })
        });
        (graph, ended)
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

/// A CUDA graph captured from a stream ([`Stream::begin_capture`], [`Stream::end_capture`]) and
/// then instantiated; destroyed on drop.
pub struct Graph {
    ctx: Arc<Context>,
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
}

impl Graph {
    /// Instantiates the captured graph (`cuGraphInstantiateWithFlags`, flags 0).
    pub fn instantiate(&mut self) -> Result<(), CudaError> {
        self.ctx.bind()?;
        // SAFETY: out-parameter; `graph` is the complete graph of an ended capture.
        check("cuGraphInstantiateWithFlags", unsafe {
            sys::cuGraphInstantiateWithFlags(&mut self.exec, self.graph, 0)
        })
    }

    /// Launches the instantiated graph on `stream` (`cuGraphLaunch`), binding its context.
    ///
    /// # Safety
    ///
    /// The graph must be instantiated, `stream` belong to the graph's GPU, and every buffer the
    /// graph's nodes use stay allocated until the stream has run it.
    pub unsafe fn launch(&self, stream: &Stream) -> Result<(), CudaError> {
        stream.ctx().bind()?;
        // SAFETY: the caller's contract above.
        check("cuGraphLaunch", unsafe {
            sys::cuGraphLaunch(self.exec, stream.raw())
        })
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: each handle is destroyed once (null ones never were created); callers wait for
        // the streams before dropping, and the driver defers destroying a graph still running.
        unsafe {
            if self.ctx.bind().is_ok() {
                if !self.exec.is_null() {
                    sys::cuGraphExecDestroy(self.exec);
                }
                if !self.graph.is_null() {
                    sys::cuGraphDestroy(self.graph);
                }
            }
        }
    }
}
