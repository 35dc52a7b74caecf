//===- Arrays.h - NumPy/DLPack arrays as kiln_tensor views and back -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===--------------------------------------------------------------------------===//

#ifndef KILN_PYTHON_ARRAYS_H
#define KILN_PYTHON_ARRAYS_H

#include "kiln-c/runtime.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

namespace kiln::python {

/// A read-only, row-major view of any array the caller passes: NumPy, or
/// anything with __dlpack__ (PyTorch, CuPy, JAX). nanobind makes a contiguous
/// copy only when the array is not row-major already.
using InputArray = nanobind::ndarray<nanobind::ro, nanobind::c_contig>;

/// The kiln_dtype of `array`'s elements. `expected` is the model's dtype: an
/// unsigned array of its width stands for a dtype NumPy lacks (bf16, the
/// 8-bit floats, int4 and co.), as bit patterns. 0 when DLPack's dtype has no
/// kiln_dtype (the runtime then names both in its dtype error).
int32_t kilnDtypeOf(const InputArray &array, int32_t expected);

/// A NumPy array that owns `tensor` (freed with kiln_tensor_destroy when the
/// array goes). Dtypes NumPy lacks come back as unsigned integers of their
/// width; the Python layer views them as ml_dtypes types.
nanobind::object toNumPy(kiln_tensor *tensor);

} // namespace kiln::python

#endif // KILN_PYTHON_ARRAYS_H
