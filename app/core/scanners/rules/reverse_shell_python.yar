rule reverse_shell_python
{
    meta:
        id = "reverse-shell-python"
        description = "Python socket whose file descriptors are duplicated onto a spawned shell"
        severity = "critical"
    strings:
        $socket = /socket\.socket\s*\(/
        $dup2 = /os\.dup2\s*\(\s*[\w.]+\.fileno\s*\(\s*\)/
        $pty = /pty\.spawn\s*\(\s*["'](\/bin\/)?(ba|z)?sh["']/
        $shell = /subprocess\.(call|Popen|run)\s*\(\s*\[\s*["']\/bin\/(ba|z)?sh["']/
        $connect = /\.connect\s*\(\s*\(/
    condition:
        $socket and $dup2 and ($pty or $shell or $connect)
}
