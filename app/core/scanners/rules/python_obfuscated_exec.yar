rule python_obfuscated_exec
{
    meta:
        id = "python-obfuscated-exec"
        description = "Python exec/eval of base64, zlib, marshal or chr-joined data: hidden code"
        severity = "high"
    strings:
        $exec_decode = /\b(exec|eval)\s*\(\s*(base64\.b64decode|base64\.b32decode|zlib\.decompress|marshal\.loads|codecs\.decode|bytes\.fromhex|binascii\.unhexlify)\s*\(/ wide ascii
        $exec_import = /\b(exec|eval)\s*\(\s*__import__\s*\(\s*["'](base64|zlib|marshal|codecs|binascii)["']\s*\)/ wide ascii
        $exec_compile = /\b(exec|eval)\s*\(\s*compile\s*\(\s*(base64|zlib|marshal|codecs)\./ wide ascii
        $exec_chr = /\bexec\s*\(\s*(""|'')\.join\s*\(\s*(map\s*\(\s*chr|\[?\s*chr\s*\()/ wide ascii
        $exec_loads = /\bexec\s*\(\s*(zlib|marshal|lzma|bz2|gzip)\.(loads|decompress)\s*\(/ wide ascii
    condition:
        any of them
}
