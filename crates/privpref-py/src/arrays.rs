//! numpy arrays in, slices out: the buffers the library's views borrow.
//!
//! The Python layer (`privpref._arrays`) hands over C-contiguous arrays of the exact dtypes
//! below (copying once what is not); here they are borrowed in place, without a copy, for as
//! long as the call runs. Anything else is a `TypeError` naming the argument.

use numpy::{PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use privpref::data::{Features, PairwiseView};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// A borrowed, C-contiguous feature array (`float64` or `float32`, kept in its dtype).
pub enum FeatureArray<'py> {
    /// `float64`.
    F64(PyReadonlyArrayDyn<'py, f64>),
    /// `float32`: the library widens it in registers as it reads it and accumulates in `f64`.
    F32(PyReadonlyArrayDyn<'py, f32>),
}

impl<'py> FeatureArray<'py> {
    /// Borrows `obj` (a C-contiguous float64 or float32 array of `ndim` dimensions).
    pub fn borrow(obj: &Bound<'py, PyAny>, name: &str, ndim: usize) -> PyResult<Self> {
        let out = if let Ok(a) = obj.cast::<PyArrayDyn<f64>>() {
            FeatureArray::F64(a.try_readonly()?)
        } else if let Ok(a) = obj.cast::<PyArrayDyn<f32>>() {
            FeatureArray::F32(a.try_readonly()?)
        } else {
            return Err(PyTypeError::new_err(format!(
                "{name} must be a float64 or float32 numpy array"
            )));
        };
        let (c, dims) = match &out {
            FeatureArray::F64(a) => (a.is_c_contiguous(), a.ndim()),
            FeatureArray::F32(a) => (a.is_c_contiguous(), a.ndim()),
        };
        if !c || dims != ndim {
            return Err(PyTypeError::new_err(format!(
                "{name} must be a C-contiguous array of {ndim} dimensions"
            )));
        }
        Ok(out)
    }

    /// The shape.
    pub fn shape(&self) -> Vec<usize> {
        match self {
            FeatureArray::F64(a) => a.shape().to_vec(),
            FeatureArray::F32(a) => a.shape().to_vec(),
        }
    }

    /// The `float64` values in place, or `None` for `float32`.
    pub fn f64(&self) -> Option<&[f64]> {
        match self {
            FeatureArray::F64(a) => Some(a.as_slice().expect("checked C-contiguous")),
            FeatureArray::F32(_) => None,
        }
    }

    /// The values as the library's borrowed features (`Send + Sync`), for a closure that may
    /// run on another thread.
    pub fn slice(&self) -> Features<'_> {
        match self {
            FeatureArray::F64(a) => Features::F64(a.as_slice().expect("checked C-contiguous")),
            FeatureArray::F32(a) => Features::F32(a.as_slice().expect("checked C-contiguous")),
        }
    }

    /// The address of the first element (the zero-copy check of the tests).
    pub fn address(&self) -> usize {
        match self {
            FeatureArray::F64(a) => a.as_slice().map(|s| s.as_ptr() as usize).unwrap_or(0),
            FeatureArray::F32(a) => a.as_slice().map(|s| s.as_ptr() as usize).unwrap_or(0),
        }
    }
}

/// The validated pairwise view of borrowed features (`float64` or `float32`, read in place)
/// and labels, without weights.
pub fn pairwise_view<'a>(x: Features<'a>, n: usize, d: usize, y: &'a [u8]) -> privpref::Result<PairwiseView<'a>> {
    match x {
        Features::F64(v) => PairwiseView::new(v, n, d, y, None),
        Features::F32(v) => PairwiseView::new_f32(v, n, d, y, None),
    }
}

/// Borrows a C-contiguous array of element type `T` (labels `uint8`, weights `float64`, item
/// indices `uint32`) with `ndim` dimensions.
pub fn borrow_exact<'py, T: numpy::Element>(
    obj: &Bound<'py, PyAny>,
    name: &str,
    dtype: &str,
    ndim: usize,
) -> PyResult<PyReadonlyArrayDyn<'py, T>> {
    let a = obj
        .cast::<PyArrayDyn<T>>()
        .map_err(|_| PyTypeError::new_err(format!("{name} must be a {dtype} numpy array")))?
        .try_readonly()?;
    if !a.is_c_contiguous() || a.ndim() != ndim {
        return Err(PyTypeError::new_err(format!(
            "{name} must be a C-contiguous {dtype} array of {ndim} dimensions"
        )));
    }
    Ok(a)
}

/// As [`borrow_exact`] for an optional argument (`None` stays `None`).
pub fn borrow_optional<'py, T: numpy::Element>(
    obj: Option<&Bound<'py, PyAny>>,
    name: &str,
    dtype: &str,
    ndim: usize,
) -> PyResult<Option<PyReadonlyArrayDyn<'py, T>>> {
    match obj {
        Some(o) if !o.is_none() => borrow_exact(o, name, dtype, ndim).map(Some),
        _ => Ok(None),
    }
}

/// The values of a borrowed array (checked C-contiguous).
pub fn values<'a, T: numpy::Element>(a: &'a PyReadonlyArrayDyn<'_, T>) -> &'a [T] {
    a.as_slice().expect("checked C-contiguous")
}
