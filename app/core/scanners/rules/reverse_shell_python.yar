rule reverse_shell_python
{
    meta:
        id = "reverse-shell-python"
        description = "Python socket whose file descriptors are duplicated onto a spawned shell"
        severity = "critical"
    strings:
        $socket = /socket\.socket\s*\(/ wide ascii
        $dup2 = /os\.dup2\s*\(\s*[\w.]+\.fileno\s*\(\s*\)/ wide ascii
        $pty = /pty\.spawn\s*\(\s*["'](\/bin\/)?(ba|z)?sh["']/ wide ascii
        $shell = /subprocess\.(call|Popen|run)\s*\(\s*\[\s*["']\/bin\/(ba|z)?sh["']/ wide ascii
        $connect = /\.connect\s*\(\s*\(/ wide ascii
    condition:
        $socket and $dup2 and ($pty or $shell or $connect)
}
