rule reverse_shell_scripting
{
    meta:
        id = "reverse-shell-scripting"
        description = "Perl, PHP, Ruby or PowerShell one-liner that connects out and runs a shell"
        severity = "critical"
    strings:
        $perl = /perl\s+-e\s+['"]use\s+Socket;[^\n]{0,400}(exec|system)\s*\(/ nocase wide ascii
        $php = /fsockopen\s*\([^\n]{0,200}(exec|shell_exec|system|passthru|proc_open|popen)\s*\(\s*["']\/bin\/(ba)?sh/ wide ascii
        $ruby = /ruby\s+-rsocket\s+-e\s*['"][^\n]{0,300}(exec|spawn|system)\b/ wide ascii
        $powershell = /System\.Net\.Sockets\.TCPClient\s*\([^\n]{0,400}(GetStream|iex|Invoke-Expression)/ nocase wide ascii
    condition:
        any of them
}
