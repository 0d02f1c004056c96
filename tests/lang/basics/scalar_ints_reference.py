# The expected output of scalar_ints.tl (run: /usr/bin/python3 scalar_ints_reference.py):
# Python integers wrapped by hand, numpy for f32 values
import numpy as np
def wrap(v,bits,signed):
    v &= (1<<bits)-1
    if signed and v >> (bits-1): v -= 1<<bits
    return v
i8=lambda v: wrap(v,8,True); i16=lambda v: wrap(v,16,True); u16=lambda v: wrap(v,16,False); u32=lambda v: wrap(v,32,False); u64=lambda v: wrap(v,64,False)
U64MAX=2**64-1
print(-128,127,-32768,32767,65535)
print(2**32-1, U64MAX, 0, 0)
a=100;b=3
print(i8(a+a), i8(a*b), i8(-a-a), a//b, a%b)
m=-128
print(i8(-m), i8(m-1), -128, -2**31)
h=30000
print(i16(h+h), i16(h*3), h*3)
u=65000
print(u16(u+1000), u16(u+536), u16(3-5), u16(u*u))
w=4000000000
print(u32(w+w), w//3, w%7, u32(-1))
x=U64MAX-5
print(u64(x+10), x//1000, x%1000, u64(x*2))
acc=u16(u16(65530+10)*3); print(acc)
print("true true true true")
s=-32768
print(s>>15, i16(s<<1), (1<<15)>>15)
print(1<<31, (2**32-1)>>31, 1<<63)
print(U64MAX>>60, 0xF0 & 0x3C, 0xF0|0x0F)
print(0xFF ^ 0x0F, u16(~0), i8(~0), u64(~0))
big=106000
print(u16(big), i16(big), u32(-1), u64(-1))
print(i8(200), wrap(-56,8,False), wrap(U64MAX,64,True), u32(4294967296), u16(65537))
def sat(f,lo,hi):
    if f!=f: return 0
    return max(lo,min(hi,int(f)))
f32=lambda v: float(np.float32(v))
print(sat(f32(300.5),-128,127), sat(f32(-300.5),-128,127), sat(f32(70000.0),0,65535), sat(f32(-5.5),0,2**32-1))
print(sat(f32(1e30),0,U64MAX), 0, sat(f32(3.99),0,65535), sat(1e19,0,U64MAX))
print(repr(float(U64MAX)), str(np.float32(2**32-1)), ord('A')+1)
print(65535, len(str(U64MAX)))
print('Ok(255) Err("`65536` is out of range for u16") Err("`-1` is not an integer")')
print('Ok(-128) Err("`128` is out of range for i8") Ok(%d)' % U64MAX)
print('Err("`18446744073709551616` is out of range for u64") Err("`-32769` is out of range for i16")')
print(sorted([4000000000,7,2147483648,0]), sorted([5,-32768,32767,-1]), sorted([U64MAX,1,1<<63]))
print(2,3,2,-7)
print("Px { a: -1, b: 65535, c: 7 }", u16(65536))
