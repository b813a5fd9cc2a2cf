// RUN: xdsl-opt %s -p ptoc-legalize,ptoc-allocate | filecheck %s
// RUN: xdsl-opt %s -p 'ptoc-legalize,ptoc-allocate{hands=1 depth=3}' | filecheck %s --check-prefix=REFRESH
// RUN: xdsl-opt %s -p 'ptoc-legalize,ptoc-allocate{hands=1 depth=4 capacity=6400}' | filecheck %s --check-prefix=FILLER
// RUN: xdsl-opt %s -p 'ptoc-legalize,ptoc-allocate{hands=1 depth=2}' | filecheck %s --check-prefix=SPILL
// RUN: xdsl-opt %s -p 'ptoc-legalize,ptoc-allocate{hands=2 depth=2}' | filecheck %s --check-prefix=HANDS

// %a is read again after three other results: the queues must keep it reachable.
func.func @reuse(%x: !tile.tensor<FP32, 8x64>, %o: !tile.tensor<FP32, 8x64>) {
  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 8x64>
  %b = tile.exp %a : !tile.tile<FP32, 8x64>
  %c = tile.add %a, %b : !tile.tile<FP32, 8x64>
  %d = tile.mul %c, %b : !tile.tile<FP32, 8x64>
  %e = tile.sub %d, %a : !tile.tile<FP32, 8x64>
  tile.store %e, %o[0, 0] : !tile.tile<FP32, 8x64>, !tile.tensor<FP32, 8x64>
  func.return
}

// The ABI: tensor bases in a0, a1 (no PE step); the stride 256 goes to s0 up front.
// CHECK:      func.func @reuse({{.*}}) attributes {pto.abi = [["a0", 0 : i64, 0 : i64], ["a1", 1 : i64, 0 : i64]], pto.scratch = 0 : i64, pto.machine = "hands=4,depth=16,capacity=262144,pes=4,gm_size=67108864"}
// CHECK:      pto.materialize %[[S:.*]] gpr "s0"
// CHECK-NEXT: %a = pto.tload FP32 gpr(%{{.*}}, %[[S]]) {{.*}} hands ["T"] gprs ["a0", "s0"]
// CHECK-NEXT: %b = pto.texp FP32 %a {{.*}} refs ["T#1"] hands ["T"]
// CHECK-NEXT: %c = pto.tadd FP32 %a, %b {{.*}} refs ["T#2", "T#1"] hands ["T"]
// CHECK-NEXT: %d = pto.tmul FP32 %c, %b {{.*}} refs ["T#1", "T#2"] hands ["T"]
// CHECK-NEXT: %e = pto.tsub FP32 %d, %a {{.*}} refs ["T#1", "T#4"] hands ["T"]
// CHECK-NEXT: pto.tstore FP32 %e {{.*}} refs ["T#1"] gprs ["a1", "s0"]

// Depth 3: before %d would push %a out of T#3, an in-place TMOV refreshes it to T#1.
// REFRESH:      %c = pto.tadd FP32 %a, %b {{.*}} refs ["T#2", "T#1"] hands ["T"]
// REFRESH-NEXT: pto.tmov FP32 %a {{.*}} refs ["T#3"] hands ["T"] role "refresh"
// REFRESH-NEXT: %d = pto.tmul FP32 %c, %b {{.*}} refs ["T#2", "T#3"] hands ["T"]
// REFRESH-NEXT: %e = pto.tsub FP32 %d, %a {{.*}} refs ["T#1", "T#2"] hands ["T"]

// 6400 bytes: the queues only release capacity once a hand is full, so 128-byte fillers
// fill T before the capacity runs out; %a is refreshed where the queue would drop it.
// FILLER:      %b = pto.texp
// FILLER-NEXT: pto.texpands U8 dims [1, -1, -1] mask 8 hands ["T"] role "filler"
// FILLER-NEXT: %c = pto.tadd FP32 %a, %b {{.*}} refs ["T#3", "T#2"] hands ["T"]
// FILLER-NEXT: pto.tmov FP32 %a {{.*}} refs ["T#4"] hands ["T"] role "refresh"
// FILLER-NEXT: %d = pto.tmul FP32 %c, %b {{.*}} refs ["T#2", "T#4"] hands ["T"]
// FILLER-NEXT: pto.texpands U8 {{.*}} role "filler"
// FILLER-NEXT: %e = pto.tsub FP32 %d, %a {{.*}} refs ["T#2", "T#3"] hands ["T"]

// Depth 2 in one hand: %a is spilled to the scratch area (whose per-PE base is the
// last ABI register, a2) and reloaded before %e reads it.
// SPILL:      pto.scratch = 2048 : i64
// SPILL:      %b = pto.texp FP32 %a {{.*}} refs ["T#1"] hands ["T"]
// SPILL-NEXT: pto.tstore FP32 %a gpr({{.*}}) dims [-1, -1, -1] mask 8 refs ["T#2"] gprs ["a2", "s0"] role "spill"
// SPILL-NEXT: %c = pto.tadd FP32 %a, %b {{.*}} refs ["T#2", "T#1"] hands ["T"]
// SPILL-NEXT: %d = pto.tmul FP32 %c, %b {{.*}} refs ["T#1", "T#2"] hands ["T"]
// SPILL-NEXT: pto.tload FP32 %a gpr({{.*}}) dims [64, 8, -1] mask 8 hands ["T"] gprs ["a2", "s0"] role "reload"
// SPILL-NEXT: %e = pto.tsub FP32 %d, %a {{.*}} refs ["T#2", "T#1"] hands ["T"]

// Two hands of depth 2: %a, read again after three more results, goes to the cold hand
// U; the short-lived results go to the hot hand T.
// HANDS:      %a = pto.tload FP32 {{.*}} hands ["U"]
// HANDS-NEXT: %b = pto.texp FP32 %a {{.*}} refs ["U#1"] hands ["U"]
// HANDS-NEXT: %c = pto.tadd FP32 %a, %b {{.*}} refs ["U#2", "U#1"] hands ["T"]
// HANDS-NEXT: %d = pto.tmul FP32 %c, %b {{.*}} refs ["T#1", "U#1"] hands ["T"]
// HANDS-NEXT: %e = pto.tsub FP32 %d, %a {{.*}} refs ["T#1", "U#2"] hands ["T"]
