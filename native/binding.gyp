# node-gyp build of the sd_notify Node-API addon (C only, no node-addon-api); output: build/Release/azc_notify.node
{
  "targets": [
    {
      "target_name": "azc_notify",
      "sources": ["notify.c"],
      "defines": ["NAPI_VERSION=8"],
      "cflags": ["-std=c11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"],
      "conditions": [
        ["OS!='linux'", { "defines": ["AZC_NOTIFY_UNSUPPORTED=1"] }]
      ]
    }
  ]
}
