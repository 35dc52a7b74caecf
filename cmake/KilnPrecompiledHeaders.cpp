// The translation unit that owns Kiln's precompiled header (see
// KilnPrecompiledHeaders.cmake); it defines nothing.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
