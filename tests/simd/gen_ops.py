#!/usr/bin/env python3
# Writes tests/simd/simd_ops.wast: every SIMD row of src/wasm/opcodes.def
# (relaxed SIMD's included) behind an export of numbers, for ww-difftest
# (random arguments, every backend and tier against the CPU interpreter,
# bit for bit). tests/spec/wast2json3.sh converts it.
#   usage: python3 tests/simd/gen_ops.py   (from the repository root)
import os, random, re

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
rows = []
for ln in open(os.path.join(root, 'src/wasm/opcodes.def')):
    m = re.match(r'WASM_OP\((\w+),\s*0xFD,\s*(0x[0-9A-F]+),\s*"([^"]+)",\s*(\w+),\s*(\w+),\s*(\w+),\s*(\w+),\s*(\w+),\s*(\d+)\)', ln)
    if not m:
        continue
    name, code, text, imm, r, p1, p2, p3, mem = m.groups()
    low = lambda t: t.lower() if t != '___' else t
    lanes = 0
    if imm == 'MemLane':
        lanes = 16 // int(mem)
    elif imm == 'Lane':
        lanes = int(re.match(r'[if]\d+x(\d+)', text).group(1))
    rows.append(dict(text=text, imm=imm, r=low(r), p1=low(p1), p2=low(p2), p3=low(p3), mem=int(mem), lanes=lanes))
assert len(rows) == 256, len(rows)  # 236 of 2.0, 20 of relaxed SIMD
random.seed(12)
A='(i64x2.replace_lane 1 (i64x2.splat (local.get $a0)) (local.get $a1))'
B='(i64x2.replace_lane 1 (i64x2.splat (local.get $b0)) (local.get $b1))'
C='(i64x2.replace_lane 1 (i64x2.splat (local.get $c0)) (local.get $c1))'
def scalar(t, src):
    return {'i32':'(i32.wrap_i64 %s)'%src,'i64':src,'f32':'(f32.reinterpret_i32 (i32.wrap_i64 %s))'%src,'f64':'(f64.reinterpret_i64 %s)'%src}[t]
def to_i64(t, e):
    return {'i32':'(i64.extend_i32_u %s)'%e,'i64':e,'f32':'(i64.extend_i32_u (i32.reinterpret_f32 %s))'%e,'f64':'(i64.reinterpret_f64 %s)'%e}[t]
out=[';; Every SIMD instruction behind an export of numbers, for the randomized',
     ';; differential test (ww-difftest): the arguments build v128 operands',
     ';; (a = a0|a1, b = b0|b1, c = c0|c1), the result comes back as two i64',
     ';; halves. Lane immediates and shuffle masks are fixed per export. Made by',
     ';; tests/simd/gen_ops.py from the opcode table; regenerate, do not edit.',
     ';; Relaxed SIMD included: convert with tests/spec/wast2json3.sh.',
     '(module',
     '  (memory 1)']
sig='(param $a0 i64) (param $a1 i64) (param $b0 i64) (param $b1 i64) (param $c0 i64) (param $c1 i64) (param $k i32) (result i64 i64)'
n=0
for r in rows:
    t=r['text']; imm=r['imm']
    if t=='v128.const':
        body='(v128.const i32x4 0x01234567 0x89abcdef 0x7fc00001 0xff800000)'
        res='v128'
    elif imm=='Shuffle':
        lanes=' '.join(str(random.randrange(32)) for _ in range(16))
        body='(i8x16.shuffle %s %s %s)'%(lanes,A,B); res='v128'
    elif imm=='Lane':
        lane=random.randrange(r['lanes'])
        if 'extract' in t:
            body='(%s %d %s)'%(t,lane,A); res=r['r']
        else:
            body='(%s %d %s %s)'%(t,lane,A,scalar(r['p2'],'(local.get $b0)')); res='v128'
    elif imm=='Mem':
        # a and b stored at 0 and 16; the access at k & 31 (in bounds)
        pre='(v128.store (i32.const 0) %s) (v128.store (i32.const 16) %s)'%(A,B)
        addr='(i32.and (local.get $k) (i32.const 31))'
        if r['r']=='v128':
            body='(block (result v128) %s (%s %s))'%(pre,t,addr); res='v128'
        else:  # v128.store of c at k & 31, then the 16 bytes at 8 read back
            body='(block (result v128) %s (v128.store %s %s) (v128.load (i32.const 8)))'%(pre,addr,C); res='v128'
    elif imm=='MemLane':
        lane=random.randrange(r['lanes'])
        pre='(v128.store (i32.const 0) %s) (v128.store (i32.const 16) %s)'%(A,B)
        addr='(i32.and (local.get $k) (i32.const 31))'
        if r['r']=='v128':
            body='(block (result v128) %s (%s %d %s %s))'%(pre,t,lane,addr,C); res='v128'
        else:
            body='(block (result v128) %s (%s %d %s %s) (v128.load (i32.const 8)))'%(pre,t,lane,addr,C); res='v128'
    else:
        ps=[p for p in (r['p1'],r['p2'],r['p3']) if p!='___']
        args=[]
        vecs=[A,B,C]
        vi=0
        for p in ps:
            if p=='v128': args.append(vecs[vi]); vi+=1
            elif p=='i32' and t.endswith(('.shl','.shr_s','.shr_u')): args.append('(local.get $k)')
            else: args.append(scalar(p,'(local.get $a0)'))
        body='(%s %s)'%(t,' '.join(args)); res=r['r']
    if res=='v128':
        ret='(local.set $r %s) (i64x2.extract_lane 0 (local.get $r)) (i64x2.extract_lane 1 (local.get $r))'%body
    else:
        ret='%s (i64.const 0)'%to_i64(res,body)
    out.append('  (func (export "%s") %s (local $r v128)\n    %s)'%(t,sig,ret))
    n+=1
out.append(')')
open(os.path.join(root, 'tests/simd/simd_ops.wast'),'w').write('\n'.join(out)+'\n')
print(n)
