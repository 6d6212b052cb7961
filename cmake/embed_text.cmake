# cmake -DIN=<file> -DOUT=<file.c> -DSYMBOL=<name> -P embed_text.cmake
#
# Writes a C file defining `const char <SYMBOL>[]` (the bytes of IN plus a
# NUL) and `const unsigned long <SYMBOL_SIZE>` (the byte count, without it).
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hexLength)
math(EXPR size "${hexLength} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],)"
       "\\1\n  " bytes "${bytes}")
file(WRITE "${OUT}.tmp"
     "/* Generated from ${IN} by cmake/embed_text.cmake: do not edit. */\n"
     "const char ${SYMBOL}[] = {\n  ${bytes}0x00};\n"
     "const unsigned long ${SYMBOL_SIZE} = ${size};\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
