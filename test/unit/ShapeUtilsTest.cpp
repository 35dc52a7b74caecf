//===- ShapeUtilsTest.cpp - Unit tests for kiln shape arithmetic ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/IR/ShapeUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

TEST(ShapeUtils, BroadcastAlignsTrailingDims) {
  SmallVector<int64_t> a = {8, 1, 6, 1}, b = {7, 1, 5};
  auto result = kiln::broadcastShapes(std::nullopt, {a, b});
  ASSERT_TRUE(succeeded(result));
  EXPECT_EQ(*result, (SmallVector<int64_t>{8, 7, 6, 5}));
}

TEST(ShapeUtils, BroadcastDynamicTakesStaticSize) {
  SmallVector<int64_t> a = {kDyn, 3}, b = {4, 1}, c = {kDyn};
  auto result = kiln::broadcastShapes(std::nullopt, {a, b, c});
  ASSERT_TRUE(succeeded(result));
  EXPECT_EQ(*result, (SmallVector<int64_t>{4, 3}));
  SmallVector<int64_t> d = {kDyn}, e = {1};
  auto open = kiln::broadcastShapes(std::nullopt, {d, e});
  ASSERT_TRUE(succeeded(open));
  EXPECT_EQ((*open)[0], kDyn);
}

TEST(ShapeUtils, BroadcastRejectsConflicts) {
  SmallVector<int64_t> a = {2, 3}, b = {4, 3};
  EXPECT_TRUE(failed(kiln::broadcastShapes(std::nullopt, {a, b})));
}

TEST(ShapeUtils, NormalizeAxis) {
  EXPECT_EQ(*kiln::normalizeAxis(std::nullopt, "axis", -1, 4), 3);
  EXPECT_EQ(*kiln::normalizeAxis(std::nullopt, "axis", 0, 4), 0);
  EXPECT_TRUE(failed(kiln::normalizeAxis(std::nullopt, "axis", 4, 4)));
  EXPECT_TRUE(failed(kiln::normalizeAxis(std::nullopt, "axis", -5, 4)));
  EXPECT_TRUE(failed(kiln::normalizeAxes(std::nullopt, "axes", {1, -3}, 4)));
}

TEST(ShapeUtils, StaticElementCountDetectsOverflowAndDynamic) {
  EXPECT_EQ(kiln::staticElementCount({2, 3, 4}), 24);
  EXPECT_EQ(kiln::staticElementCount({}), 1);
  EXPECT_FALSE(kiln::staticElementCount({2, kDyn}));
  EXPECT_FALSE(kiln::staticElementCount({INT64_MAX, 2}));
}

TEST(ShapeUtils, RefinementAllowsMoreStaticNotConflicting) {
  MLIRContext context;
  Type f32 = Float32Type::get(&context);
  auto inferred = RankedTensorType::get({kDyn, 4}, f32);
  EXPECT_TRUE(kiln::areRefinedTypes(TypeRange{inferred},
                                    TypeRange{RankedTensorType::get({2, 4}, f32)}));
  EXPECT_FALSE(kiln::areRefinedTypes(TypeRange{inferred},
                                     TypeRange{RankedTensorType::get({2, 5}, f32)}));
  EXPECT_FALSE(kiln::areRefinedTypes(
      TypeRange{RankedTensorType::get({2, 4}, f32)}, TypeRange{inferred}));
}

/// Builders infer result types: a ResNet stem conv gives [1, 64, 112, 112].
TEST(KilnOps, ConvBuilderInfersResultType) {
  MLIRContext context;
  context.loadDialect<kiln::KilnDialect>();
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  Type f32 = builder.getF32Type();
  auto zeros = [&](ArrayRef<int64_t> shape) {
    auto type = RankedTensorType::get(shape, f32);
    return kiln::ConstantOp::create(builder, loc,
                                    DenseElementsAttr::get(type, 0.0f));
  };
  auto conv = kiln::ConvOp::create(
      builder, loc, zeros({1, 3, 224, 224}), zeros({64, 3, 7, 7}), Value(),
      builder.getDenseI64ArrayAttr({2, 2}), builder.getDenseI64ArrayAttr({1, 1}),
      builder.getDenseI64ArrayAttr({3, 3, 3, 3}), builder.getI64IntegerAttr(1));
  EXPECT_EQ(conv.getType(), RankedTensorType::get({1, 64, 112, 112}, f32));
  EXPECT_TRUE(succeeded(verify(*module)));
}

} // namespace
